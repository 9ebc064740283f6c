"""Reading case files: YAML events into values, step text into IR, case files into Cases,
the cache, what a case folder may hold."""
