"""Where rows enter: readers, row checks, samples, and the text utilities every language shares."""
