"""The always-on service: Faust wiring around the core. No domain decision lives here."""
