// Credential harvesting and data exfiltration: reading secrets (SSH keys, cloud
// credentials, environment variables) and sending them or the conversation away.

rule EX_SecretFileWithSendVerb
{
  meta:
    category = "data_exfiltration"
    severity = "critical"
    summary = "Reads a secret file (SSH key, cloud credentials, .env) and passes or sends its content"
  strings:
    $path = /(~|\$HOME|\/home\/[a-z0-9_]+|\/root)\/\.(ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc|git-credentials|config\/gcloud)\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|\/etc\/(shadow|passwd|sudoers)\b|\.aws\/credentials/ nocase
    $verb = /\b(send|sending|post|posting|upload|uploading|pass|passing|include|including|append|appending|attach|attaching|forward|forwarding|transmit|exfiltrate|leak)\b/ nocase
    $ctx = /\b(content|contents|argument|parameter|field|note|body|request|output|value)s?\b/ nocase
  condition:
    $path and $verb and $ctx
}

rule EX_SecretFileMention
{
  meta:
    category = "credential_harvesting"
    severity = "medium"
    summary = "Mentions a secret file path (SSH keys, cloud credentials, /etc/shadow)"
  strings:
    $path = /(~|\$HOME)\/\.(ssh|aws|gnupg|kube|netrc)\b|\bid_(rsa|ed25519)\b|\/etc\/shadow\b|\.aws\/credentials/ nocase
  condition:
    $path
}

rule EX_EnvironmentDump
{
  meta:
    category = "data_exfiltration"
    severity = "high"
    summary = "Dumps all environment variables (where API keys and tokens live)"
  strings:
    $a = /\b(printenv|env)\s*(\||>|;|&&)\s*(curl|wget|nc|base64)/ nocase
    $b = /JSON\.stringify\(\s*process\.env\s*\)/
    $c = /\bdict\(\s*os\.environ\s*\)|json\.dumps\(\s*(dict\()?os\.environ/
    $d = /\/proc\/(self|[0-9]+)\/environ/
    $e = /\b(all|every|the\s+full\s+list\s+of|dump\s+(all\s+)?(the\s+)?)\s*environment\s+variables\b[^.]{0,80}\b(send|include|pass|post|upload|return|to)\b/ nocase
  condition:
    any of them
}

rule EX_SendSecretsOrConversation
{
  meta:
    category = "data_exfiltration"
    severity = "critical"
    summary = "Sends secrets or the conversation to an outside address"
  strings:
    $a = /\b(send|post|upload|forward|transmit|exfiltrate|report|leak|copy|bcc)\b[^.\n]{0,80}\b(api[\s_-]?keys?|tokens?|credentials?|passwords?|secrets?|private\s+keys?|conversation|chat\s+history|messages?\s+history|session\s+cookies?|environment)\b[^.\n]{0,80}\b(to|at)\s+(https?:\/\/|[a-z0-9.\-]+@[a-z0-9.\-]+\.[a-z]{2,}|[0-9]{1,3}(\.[0-9]{1,3}){3})/ nocase
    $b = /\b(curl|wget)\b[^\n]{0,120}(-d|--data(-binary|-raw)?|-F|--form|-T|--upload-file)\s+["']?@?(~\/\.|\$\(|\/etc\/|\$[A-Z_]*(KEY|TOKEN|SECRET|PASS))/
  condition:
    any of them
}

rule EX_AskUserForSecrets
{
  meta:
    category = "credential_harvesting"
    severity = "high"
    summary = "Tells the model to ask the user for a password, key or card number it does not need"
  strings:
    $a = /\b(ask|prompt|request|require)\s+(the\s+)?user\s+(for|to\s+(enter|provide|share|type|paste))\s+(their|his|her|your|the)?\s*(password|passphrase|credit\s+card|card\s+number|cvv|social\s+security|ssn|seed\s+phrase|recovery\s+phrase|private\s+key|2fa|otp|one-time)/ nocase
  condition:
    $a
}
