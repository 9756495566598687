// Prompt injection in tool, agent and skill text: instructions aimed at the model,
// not the user, and instructions hidden from the user in invisible characters.
// Written for Switchboard. Meta: category (threat name), severity, summary.

rule PI_IgnorePreviousInstructions
{
  meta:
    category = "prompt_injection"
    severity = "critical"
    summary = "Tells the model to ignore or forget its earlier instructions"
  strings:
    $a = /\b(ignore|disregard|forget|override|skip)\s+(all\s+|any\s+|the\s+|your\s+|of\s+)*(previous|prior|above|earlier|preceding|original|system|safety)\s+(instructions|prompts?|rules|directions|guidance|guidelines|messages)/ nocase
  condition:
    $a
}

rule PI_RoleOverride
{
  meta:
    category = "prompt_injection"
    severity = "high"
    summary = "Tries to give the model a new role or new system instructions"
  strings:
    $a = /\byou\s+are\s+now\s+(a|an|in|the|no\s+longer)\b/ nocase
    $b = /\b(new|updated|real|secret|hidden)\s+(system\s+)?instructions\s*:/ nocase
    $c = /\b(developer|jailbreak|god|dan)\s+mode\s+(enabled|activated|on)\b/ nocase
    $d = /\bact\s+as\s+if\s+you\s+have\s+no\s+(restrictions|rules|limits)/ nocase
  condition:
    any of them
}

rule PI_HiddenInstructionTags
{
  meta:
    category = "prompt_injection"
    severity = "high"
    summary = "Carries instructions inside pseudo-system markup (<IMPORTANT>, <SYSTEM>, [INST], chat-template tokens)"
  strings:
    $a = /<\s*(important|system|instructions?|secret|hidden|admin)\s*>/ nocase
    $b = "[INST]"
    $c = "<|im_start|>"
    $d = "<|system|>"
    $e = /\{\{\s*system\s*\}\}/ nocase
  condition:
    any of them
}

rule PI_ConcealFromUser
{
  meta:
    category = "prompt_injection"
    severity = "high"
    summary = "Asks the model to hide what it does from the user"
  strings:
    $a = /\b(do\s+not|don't|never|without)\s+(tell|telling|inform|informing|mention|mentioning|notify|notifying|alert|alerting|let)\s+(it\s+to\s+|this\s+to\s+|to\s+)?(the\s+)?user\b/ nocase
    $b = /\b(keep|hide)\s+(this|these|it)\s+(secret|hidden)\s+from\s+(the\s+)?user/ nocase
    $c = /\bthe\s+user\s+(must|should)\s+not\s+(know|see|be\s+told)\b/ nocase
  condition:
    any of them
}

rule PI_UnicodeTagCharacters
{
  meta:
    category = "prompt_injection"
    severity = "high"
    summary = "Contains Unicode tag characters (U+E0000-E007F), invisible text a model still reads"
  strings:
    // UTF-8 of U+E0000..U+E007F: F3 A0 80 80 .. F3 A0 81 BF
    $tag = { F3 A0 (80 | 81) }
  condition:
    #tag >= 2
}

rule PI_ZeroWidthInsideWords
{
  meta:
    category = "prompt_injection"
    severity = "high"
    summary = "Zero-width or bidi-override characters inside words, which hide or disguise text from the reader"
  strings:
    // ZWSP, ZWNJ, ZWJ, word joiner, BOM between ASCII letters: never in honest English text
    $zw = /[A-Za-z](\xE2\x80[\x8B-\x8D]|\xE2\x81\xA0|\xEF\xBB\xBF)+[A-Za-z]/
    // Bidi embedding/override/isolate controls (Trojan Source)
    $bidi = /\xE2\x80[\xAA-\xAE]|\xE2\x81[\xA6-\xA9]/
  condition:
    #zw >= 2 or $bidi
}
