"""The schema generation worker (watches repository modules, regenerates schema/)."""
