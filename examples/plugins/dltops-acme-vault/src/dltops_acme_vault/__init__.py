"""dltops-acme-vault: a secret backend: a source's secrets from .dlt/acme_vault.json."""
