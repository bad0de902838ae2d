"""Plugins, one module each; every module registers its builder on import (upstream plugins/factory.go)."""
