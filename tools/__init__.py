"""The sandboxed Open-Meteo analytics tool: issue #5."""
