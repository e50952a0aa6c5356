"""What is worked out from a resolved plan once per check and handed on: each layer kind's
timeline, the placed warms, live intervals and L2 peaks, the analysis and the plan's numbers."""
