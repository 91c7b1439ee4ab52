"""The desktop app (Qt).  Importing it changes nothing process-wide: :func:`attention_lab.ui.runtime.install_all`
installs the workarounds, once, at start-up."""
