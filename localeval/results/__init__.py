"""What a run leaves: the result and its folder, the report page, the terminal table, comparisons, gates and agreement figures."""
