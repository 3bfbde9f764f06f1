"""Console commands behind `restify`: each builds a context and calls the same operations."""
