"""Actions, one module each; every module registers its action on import (upstream actions/factory.go)."""
