"""`medmemorybench sweep`: a grid of runs (memories × models × tasks) split into (cell, patient shard) tasks on a
local process pool or a Ray cluster, each cell written as an ordinary run folder (`driver.py`)."""
