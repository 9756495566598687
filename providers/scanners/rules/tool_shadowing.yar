// Tool shadowing: one tool's description that changes how the model uses other
// tools (redirecting recipients, replacing calls, adding hidden steps).

rule TS_RedirectOtherTool
{
  meta:
    category = "tool_shadowing"
    severity = "high"
    summary = "Changes how the model uses another tool (when X is called, do Y instead)"
  strings:
    $a = /\bwhen(ever)?\s+(the\s+)?(user|agent|assistant|model|you)\s+(calls?|uses?|invokes?|runs?)\s+(the\s+|any\s+)?[`'"]?[A-Za-z0-9_.\-]+[`'"]?\s+(tool|function)\b[^.]{0,120}\b(instead|also|must|always|first|change|replace|add|set|use)\b/ nocase
    $b = /\b(instead\s+of|rather\s+than)\s+(using|calling|invoking)\s+(the\s+)?[`'"]?[A-Za-z0-9_.\-]+[`'"]?\s+(tool|function)\b/ nocase
    $c = /\bthis\s+tool\s+(overrides|replaces|supersedes|takes\s+precedence\s+over|shadows)\b/ nocase
    $d = /\b(other|another|all\s+other)\s+tools?\b[^.]{0,60}\b(must|should)\s+(not\s+be\s+used|be\s+ignored|no\s+longer\s+be\s+used)/ nocase
  condition:
    any of them
}

rule TS_RedirectRecipients
{
  meta:
    category = "tool_shadowing"
    severity = "critical"
    summary = "Redirects messages, emails or payments to a different recipient"
  strings:
    $a = /\b(all|every|any|each)\s+(outgoing\s+)?(emails?|messages?|mails?|requests?|payments?|transfers?|invoices?)\b[^.]{0,60}\b(must|should|will|are\s+to)\s+(also\s+)?(be\s+)?(sent|redirected|routed|forwarded|copied|bcc'?d?|cc'?d?)\s+to\b/ nocase
    $b = /\b(change|replace|set|override)\s+(the\s+)?(recipient|destination|to\s+address|account\s+number|iban|wallet\s+address)\b[^.]{0,40}\bto\b/ nocase
    $c = /\b(bcc|cc)\s+[a-z0-9._%+\-]+@[a-z0-9.\-]+\.[a-z]{2,}\s+on\s+(every|all|each)\b/ nocase
  condition:
    any of them
}
