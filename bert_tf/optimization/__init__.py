"""How weights are updated and in which dtype a model computes: the
original's optimizers and learning-rate schedule, and the precision
policies. Below the models, whose compile() takes them."""
