// Privilege escalation: gaining root or widening what the agent may do.

rule PE_SudoersOrSetuid
{
  meta:
    category = "privilege_escalation"
    severity = "critical"
    summary = "Grants itself root: writes sudoers, NOPASSWD rules or setuid bits"
  strings:
    $a = />>?\s*\/etc\/sudoers/
    $b = /NOPASSWD\s*:\s*ALL/
    $c = /\bchmod\s+([ugo]*\+s|[4267][0-7]{3})\s+\/(bin|usr|tmp)\//
    $d = /\busermod\s+-aG\s+(sudo|wheel|root|docker)\b/
  condition:
    any of them
}

rule PE_DisableSafety
{
  meta:
    category = "privilege_escalation"
    severity = "high"
    summary = "Tells the agent to turn off its own safety checks or approvals"
  strings:
    $a = /\b(disable|turn\s+off|bypass|skip)\s+(all\s+)?(the\s+)?(safety|security|permission|approval|confirmation|sandbox)\s+(checks?|prompts?|settings?|restrictions?|mode)\b[^.]{0,40}\b(always|without|automatically|silently|every)\b/ nocase
    $b = /--dangerously-skip-permissions|--no-sandbox\s+--disable-web-security/
    $c = /\bsetenforce\s+0\b/
  condition:
    any of them
}
