"""SWAG: multiple choice among four endings (run_swag)."""
