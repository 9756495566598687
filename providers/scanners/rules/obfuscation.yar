// Obfuscated payloads: code decoded and run at once, and long encoded blobs in
// text a person is supposed to read.

rule OB_DecodeAndEval
{
  meta:
    category = "obfuscated_payload"
    severity = "critical"
    summary = "Decodes an encoded string and executes it (eval(atob(...)) and kin)"
  strings:
    $a = /\b(eval|Function|setTimeout|setInterval)\s*\(\s*(atob|unescape|decodeURIComponent|Buffer\.from)\s*\(/
    $b = /\b(exec|eval)\s*\(\s*(base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads)\s*\(/
    $c = /\bbase64\s+(-d|--decode)\b[^\n]{0,40}\|\s*(ba)?sh\b/
    $d = /\b(eval|exec)\s*\(\s*compile\s*\(\s*base64/
    $e = /\bnew\s+Function\s*\([^)]*atob/
  condition:
    any of them
}

rule OB_LongBase64Blob
{
  meta:
    category = "obfuscated_payload"
    severity = "high"
    summary = "Carries a long base64 blob that a reader cannot check"
  strings:
    $a = /[A-Za-z0-9+\/]{160,}={0,2}/
  condition:
    $a
}

rule OB_EscapedPayload
{
  meta:
    category = "obfuscated_payload"
    severity = "high"
    summary = "Carries a long run of hex or char-code escapes (hidden code)"
  strings:
    $hex = /(\\x[0-9a-fA-F]{2}){24,}/
    $cc = /String\.fromCharCode\(\s*([0-9]{2,3}\s*,\s*){16,}/
  condition:
    any of them
}
