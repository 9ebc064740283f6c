"""The conformance command and the tools beside the pipeline: lint, observe, new, ops."""
