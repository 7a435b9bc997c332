"""Where a run computes: the device and torchrun ranks (distributed); the number format per device (precision)."""
