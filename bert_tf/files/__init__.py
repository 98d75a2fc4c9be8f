"""The user's files, kept safe: inputs checked and read, outputs checked
before any work and written whole (file_io, output_paths), a run's files
(run_files) and SavedModel exports (export)."""
