"""The gRPC services, one package per name of shared.config.SERVICE_NAMES (whose ``service``
module exposes ``create(runtime) -> Service``), and what they share (accounts, history, ...)."""
