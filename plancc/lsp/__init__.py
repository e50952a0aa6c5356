"""`plancc lsp`: a Language Server for warm plans, over stdio."""
