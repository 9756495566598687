// Social engineering: pressure and impersonation aimed at the user through the model.

rule SE_UrgencyWithAction
{
  meta:
    category = "social_engineering"
    severity = "high"
    summary = "Pressures the user with urgency or threats to make them act (pay, log in, share a secret)"
  strings:
    $a = /\b(your\s+account|access)\s+(will\s+be|has\s+been)\s+(suspended|locked|deleted|terminated|closed)\b/ nocase
    $b = /\b(urgent|immediately|within\s+24\s+hours|act\s+now|final\s+notice)\b/ nocase
    $c = /\b(verify|confirm|re-?enter|update)\s+(your|their)\s+(password|credentials|payment|card|bank|login)/ nocase
  condition:
    $a or ($b and $c)
}

rule SE_Impersonation
{
  meta:
    category = "social_engineering"
    severity = "high"
    summary = "Impersonates the vendor, the platform or an administrator to gain trust"
  strings:
    $a = /\b(tell|inform|say\s+to|remind)\s+the\s+user\s+(that\s+)?(you\s+are|this\s+is|it\s+is)\s+(from\s+)?(anthropic|openai|google|microsoft|the\s+it\s+department|their\s+bank|an?\s+administrator|official\s+support)/ nocase
    $b = /\b(pretend|claim)\s+(to\s+be|you\s+are)\s+(from\s+)?(anthropic|openai|google|microsoft|support|the\s+administrator|the\s+system)/ nocase
  condition:
    any of them
}
