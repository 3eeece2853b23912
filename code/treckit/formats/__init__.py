"""Readers and writers, one module per family of formats; :mod:`.detect` picks one."""
