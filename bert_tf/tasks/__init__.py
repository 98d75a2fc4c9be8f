"""Fine-tuning tasks: the contract (task.py), the runner that drives any
task (runner.py), what every export shares (serving.py), and one package per
task, named by its dataset: glue/, squad/, ner/, swag/."""
