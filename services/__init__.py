"""The four gRPC services. Each package exposes ``create(runtime) -> Service``."""
