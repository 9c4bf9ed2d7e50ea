"""How close the model is to real runs: calibration of machine and device profiles, validation against traces."""
