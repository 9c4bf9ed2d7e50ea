"""Teaching and explanation: the store as a dataflow graph, plain-language stall accounts, replay."""
