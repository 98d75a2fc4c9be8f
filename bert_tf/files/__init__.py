"""The user's files, kept safe: inputs checked and read, outputs checked
before any work and written whole (file_io, output_paths: the base every
module writes through), a run's files (run_files), its eval_results.txt
(eval_results) and SavedModel exports (export)."""
