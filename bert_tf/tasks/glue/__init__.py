"""GLUE and XNLI: sentence and sentence-pair classification (run_classifier)."""
