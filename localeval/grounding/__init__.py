"""Model-free grounding: how much of a statement the contexts cover, and the calibrations that combine it with the judge."""
