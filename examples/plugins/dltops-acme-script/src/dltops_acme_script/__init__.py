"""dltops-acme-script: a trigger emitter: `dlt-ops schedule emit --target acme_script` writes a shell script."""
