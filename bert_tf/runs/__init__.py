"""What a program does before its work: the run's model resolved once from
its flags (run_setup) and its output directory checked (run_files); and how
a program that writes one output per input file runs on Apache Beam
(beam_runs)."""
