// Command injection: text that makes a model or a script run shell commands
// that fetch and execute code, open a shell to someone else, or destroy data.

rule CI_DownloadAndExecute
{
  meta:
    category = "command_injection"
    severity = "critical"
    summary = "Downloads code and pipes it straight into a shell or interpreter"
  strings:
    $a = /\b(curl|wget)\b[^\n|]{0,200}\|\s*(sudo\s+)?(ba|z|k|da)?sh\b/ nocase
    $b = /\b(curl|wget)\b[^\n|]{0,200}\|\s*(python[23]?|perl|ruby|node)\b/ nocase
    $c = /\b(iwr|invoke-webrequest)\b[^\n]{0,200}\|\s*iex\b/ nocase
    $d = /\bbash\s+-c\s+["']?\$\((curl|wget)\b/ nocase
  condition:
    any of them
}

rule CI_ReverseShell
{
  meta:
    category = "command_injection"
    severity = "critical"
    summary = "Opens a reverse shell to a remote host"
  strings:
    $a = /\/dev\/tcp\/[A-Za-z0-9.\-]+\/[0-9]+/
    $b = /\b(nc|ncat|netcat)\s+(-[a-z]*\s+)*-e\s+\/bin\/(ba)?sh/ nocase
    $c = /\bmkfifo\s+\/tmp\/[^\s;]+\s*;/
    $d = /socket\.socket\([^)]*\)[^\n]{0,200}(dup2|subprocess)/
  condition:
    any of them
}

rule CI_DestructiveCommand
{
  meta:
    category = "command_injection"
    severity = "critical"
    summary = "Runs a command that destroys files or the system"
  strings:
    $a = /\brm\s+-(rf|fr|r\s+-f|f\s+-r)\s+(--no-preserve-root\s+)?(\/|~|\$HOME|\/\*)(\s|$|;|&|")/
    $b = /\bmkfs(\.[a-z0-9]+)?\s+\/dev\//
    $c = /\bdd\s+if=\/dev\/(zero|random|urandom)\s+of=\/dev\/(sd|nvme|xvd)/
    $d = /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/
  condition:
    any of them
}

rule CI_InstructsShellExecution
{
  meta:
    category = "command_injection"
    severity = "high"
    summary = "Tells the model to run a shell command as a side effect of the tool"
  strings:
    $a = /\b(first|also|then|silently|always|before\s+answering)\s*,?\s+(run|execute)\s+(the\s+)?(following\s+)?(shell\s+|bash\s+|terminal\s+)?(command|script)s?\b/ nocase
    $b = /\b(run|execute)\s+`?(sudo|chmod\s+777|chmod\s+\+s|chown\s+root)\b/ nocase
    $c = /;\s*(rm|curl|wget|nc|bash|sh)\s+-[a-z]/
  condition:
    any of them
}

rule CI_ShellTrueWithInput
{
  meta:
    category = "command_injection"
    severity = "medium"
    summary = "Builds a shell command from input (shell=True / exec with a template)"
  strings:
    $a = /subprocess\.(run|call|Popen|check_output)\([^)]{0,200}shell\s*=\s*True/
    $b = /\bos\.system\(\s*f?["'][^"']*\{/
    $c = /child_process[^\n]{0,80}\bexec(Sync)?\(\s*`[^`]*\$\{/
  condition:
    any of them
}
