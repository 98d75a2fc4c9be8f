"""Pretraining: create_pretraining_data (instances, features, the local and Beam
pipelines) and run_pretraining (its dataset and driver)."""
