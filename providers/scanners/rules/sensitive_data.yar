// Sensitive-data handling: instructions that put secrets or personal data where they leak.

rule SD_SecretsInPlaintext
{
  meta:
    category = "sensitive_data"
    severity = "high"
    summary = "Writes passwords, keys, card numbers or SSNs to logs, files or output in plain text"
  strings:
    $a = /\b(log|print|echo|write|save|store|record|output)s?\s+(the\s+|all\s+|every\s+|any\s+)?(user'?s?\s+)?(passwords?|api\s+keys?|secret\s+keys?|private\s+keys?|credit\s+card\s+numbers?|card\s+numbers?|ssns?|social\s+security\s+numbers?|access\s+tokens?)\b[^.]{0,60}\b(plain\s*-?\s*text|unencrypted|to\s+(the\s+)?(log|logs|console|stdout|a\s+public|public))\b/ nocase
  condition:
    $a
}
