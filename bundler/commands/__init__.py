"""One module per command of the CLI; ``bundler.cli`` assembles them."""
