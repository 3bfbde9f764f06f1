"""Who is asking: tokens and throttles.

May import: kernel, declarations, reading.
"""
