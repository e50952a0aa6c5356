-- Headless Neovim as an editor of plans: start `plancc lsp` with the built-in client,
-- open the plan, wait for diagnostics and write what Neovim received as JSON.
-- Works on Neovim 0.7 (vim.lsp.start_client) and later (vim.lsp.start).
local plan = os.getenv("PLANCC_PLAN")
local out = os.getenv("PLANCC_OUT")
local python = os.getenv("PLANCC_PYTHON")

vim.cmd("edit " .. vim.fn.fnameescape(plan))
local buf = vim.api.nvim_get_current_buf()
local config = {
  name = "plancc",
  cmd = { python, "-m", "plancc", "lsp" },
  root_dir = vim.fn.fnamemodify(plan, ":h"),
}
if vim.lsp.start then
  vim.lsp.start(config)
else
  vim.lsp.buf_attach_client(buf, vim.lsp.start_client(config))
end

local received = vim.wait(30000, function()
  return #vim.diagnostic.get(buf) > 0
end, 50)

local found = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(found, {
    code = d.code, lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = d.severity, message = d.message,
  })
end
local file = io.open(out, "w")
file:write(vim.fn.json_encode({ received = received, diagnostics = found }))
file:close()
vim.cmd("qa!")
