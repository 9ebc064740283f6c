"""What a run leaves: the results file, the behaviour pages, failure text, diffs, the output files."""
