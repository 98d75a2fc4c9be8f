"""The user's files, kept safe, one concern a module: paths and URLs
(storage), outputs written whole (atomic_outputs), a run owning its output
directory (run_lock), inputs checked before any work (input_checks), output
paths checked against the inputs (output_paths); and the files every run
writes the same way: eval_results.txt, SavedModel exports."""
