"""Provider rules: credentials whose shape names their issuer (a fixed prefix, a fixed structure).

Each rule is (kind, keywords, pattern). A rule's pattern runs only when one of its keywords occurs in the
lowercased text (the prefilter gitleaks and trufflehog use), so a hundred rules cost little more than
the handful that apply, and patterns compile on first use. The whole match is replaced by
`[REDACTED:<kind>]`. Formats are the issuers' published token formats; every rule carries an example
in tests/test_redact_rules.py that must match, and the rule set is versioned here so that a stored
text's redaction can be traced to the rules that made it.

Secrets with no fixed shape (an AWS secret access key, a bare API key) are found by their context or
their randomness instead (habitus.redact.context, habitus.redact.entropy).
"""

from __future__ import annotations

RULES_VERSION = 3

B62 = "A-Za-z0-9"
URLSAFE = "A-Za-z0-9_\\-"

# (kind, keywords (lowercase substrings; any one enables the rule), pattern)
RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # cloud providers
    ("aws_key", ("akia", "asia", "abia", "acca", "a3t", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka"),
     r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b"),
    ("aws_session_token", ("fqogzxivyxdz", "fwogzxivyxdz", "iqojb3jpz2lu"),
     r"\b(?:FQoGZXIvYXdz|FwoGZXIvYXdz|IQoJb3JpZ2lu)[A-Za-z0-9/+=]{20,}"),
    ("google_key", ("aiza",), rf"\bAIza[{URLSAFE}]{{35}}"),
    ("google_oauth_secret", ("gocspx-",), rf"\bGOCSPX-[{URLSAFE}]{{20,}}"),
    ("google_token", ("ya29.",), rf"\bya29\.[{URLSAFE}]{{20,}}"),
    ("google_refresh_token", ("1//0",), rf"(?<![{URLSAFE}/])1//0[{URLSAFE}]{{40,}}"),
    ("azure_secret", ("q~",), r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"),
    ("azure_storage_key", ("accountkey=",), r"(?i)AccountKey=[A-Za-z0-9+/]{40,}={0,2}"),
    ("azure_sas", ("sig=",), r"(?i)(?<=[?&])sig=[A-Za-z0-9%+/=]{20,}"),
    ("alibaba_key", ("ltai",), r"\bLTAI[A-Za-z0-9]{12,24}\b"),
    ("tencent_key", ("akid",), r"\bAKID[A-Za-z0-9]{13,40}\b"),
    ("digitalocean_token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("heroku_key", ("hrku-",), rf"\bHRKU-[{URLSAFE}]{{30,}}"),
    ("flyio_token", ("fm1r_", "fm1a_", "fm2_", "fo1_", "flyv1"),
     r"(?:\bFlyV1 )?\b(?:fm1[ar]|fm2|fo1)_[A-Za-z0-9+/=_\-]{40,}"),
    ("vercel_token", ("vcp_", "vci_", "vca_", "vcr_", "vck_"), rf"\bvc[pcikar]_[{B62}]{{24,}}"),
    ("netlify_token", ("nfp_", "nfc_"), rf"\bnf[pc]_[{B62}]{{36,}}"),
    ("supabase_token", ("sbp_", "sb_secret_"), r"\b(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})"),
    ("render_token", ("rnd_",), rf"\brnd_[{B62}]{{28,}}"),
    ("planetscale_token", ("pscale_",), r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,}"),
    ("cloudflare_ca_key", ("v1.0-",), r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b"),
    ("databricks_token", ("dapi", "dkea", "dose"), r"\b(?:dapi|dkea|dose)[a-f0-9]{32}(?:-\d)?\b"),
    ("doppler_token", ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."),
     r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9._\-]{40,}"),
    ("hashicorp_token", ("hvs.", "hvb.", "hvr.", "atlasv1"),
     r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}|\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}"),
    ("pulumi_token", ("pul-",), r"\bpul-[a-f0-9]{40}\b"),
    ("scalingo_token", ("tk-us-",), rf"\btk-us-[{URLSAFE}]{{48}}"),
    ("infracost_key", ("ico-",), r"\bico-[A-Za-z0-9]{32}\b"),
    ("octopus_key", ("api-",), r"\bAPI-[A-Z0-9]{26}\b"),
    ("dynatrace_token", ("dt0c01.", "dt0s01."), r"\bdt0[cs]01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b"),
    ("newrelic_key", ("nrak-", "nrjs-", "nrii-", "nrbr-"), r"\bNR(?:AK|JS|II|BR)-[A-Za-z0-9_\-]{19,40}"),
    ("grafana_token", ("glc_", "glsa_", "eyjrijoi"),
     r"\bglc_[A-Za-z0-9+/]{32,}={0,2}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\beyJrIjoi[A-Za-z0-9+/]{50,}={0,2}"),
    ("sentry_token", ("sntrys_", "sntryu_"), r"\bsntry[su]_[A-Za-z0-9+/=_]{40,}"),
    ("sentry_dsn", ("sentry",), r"\bhttps?://[a-f0-9]{32}@[A-Za-z0-9.\-]*sentry[A-Za-z0-9.\-]*"),
    ("trufflehog_key", ("thog-key-",), r"\bthog-key-[0-9a-f]{16}\b"),
    ("datadog_key", ("ddapi_", "ddapp_", "ddog"), r"\bdd(?:api|app)_[A-Za-z0-9]{30,}"),
    ("jfrog_key", ("akc", "cmvmdgtu"), r"\bAKC[A-Za-z0-9]{60,}|\bcmVmdGtu[A-Za-z0-9]{56,}"),
    # source hosting and CI
    ("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b"),
    ("github_token", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    ("gitlab_token", ("glpat-", "gldt-", "glrt-", "glrtr-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-",
                      "gloas-", "glsoat-", "glffct-", "glwt-", "glimt-", "glsa-"),
     # a routable token ends in ".<2 hex>.<base36>" after its body
     r"\bgl(?:pat|dt|rtr?|cbt|ptt|ft|imt|agent|oas|soat|ffct|wt|sa)-[A-Za-z0-9_\-]{15,}(?:\.[A-Za-z0-9_\-]{2,}){0,2}"),
    ("gitlab_token", ("gr1348941",), r"\bGR1348941[A-Za-z0-9_\-]{20,}"),
    ("bitbucket_token", ("atbb", "atctt3"), r"\bATBB[A-Za-z0-9_=.\-]{28,}|\bATCTT3[A-Za-z0-9_=.\-]{100,}"),
    ("atlassian_token", ("atatt3",), r"\bATATT3[A-Za-z0-9_=\-]{100,}"),
    ("npm_token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi_token", ("pypi-ageichlwas5vcmc",), r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{40,}"),
    ("rubygems_key", ("rubygems_",), r"\brubygems_[A-Za-z0-9]{48}\b"),
    ("clojars_token", ("clojars_",), r"(?i)\bCLOJARS_[a-z0-9]{60}\b"),
    ("sonar_token", ("squ_", "sqp_", "sqa_"), r"\bsq[upa]_[a-f0-9]{40}\b"),
    ("docker_token", ("dckr_pat_", "dckr_oat_"), r"\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}"),
    ("postman_key", ("pmak-",), r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    ("readme_key", ("rdme_",), r"\brdme_[a-z0-9]{70}\b"),
    ("prefect_key", ("pnu_",), r"\bpnu_[A-Za-z0-9]{36}\b"),
    ("terraform_token", ("atlasv1",), r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}"),
    # AI providers
    ("anthropic_key", ("sk-ant-",), rf"\bsk-ant-[{URLSAFE}]{{20,}}"),
    ("openai_key", ("sk-",), rf"\bsk-(?:proj-|svcacct-|admin-|None-|or-v1-)?(?=[{URLSAFE}]*[0-9A-Z])[{URLSAFE}]{{20,}}"),
    ("openai_key", ("t3blbkfj",), r"\b[A-Za-z0-9_\-]{8,}T3BlbkFJ[A-Za-z0-9_\-]{8,}"),
    ("hf_token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("hf_token", ("api_org_",), r"\bapi_org_[A-Za-z0-9]{30,}\b"),
    ("groq_key", ("gsk_",), r"\bgsk_[A-Za-z0-9]{40,}\b"),
    ("perplexity_key", ("pplx-",), r"\bpplx-[A-Za-z0-9]{40,}\b"),
    ("xai_key", ("xai-",), r"\bxai-[A-Za-z0-9]{60,}\b"),
    ("replicate_token", ("r8_",), r"\br8_[A-Za-z0-9]{37}\b"),
    ("tavily_key", ("tvly-",), r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}\b"),
    ("langsmith_key", ("lsv2_",), r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b"),
    ("fireworks_key", ("fw_",), r"\bfw_[A-Za-z0-9]{24,}\b"),
    ("firecrawl_key", ("fc-",), r"\bfc-[a-f0-9]{32}\b"),
    ("elevenlabs_key", ("sk_",), r"\bsk_[a-f0-9]{48}\b"),
    # payments and commerce
    ("stripe_key", ("sk_live", "sk_test", "pk_live", "pk_test", "rk_live", "rk_test"),
     r"\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("stripe_key", ("whsec_",), r"\bwhsec_[A-Za-z0-9]{20,}"),
    ("square_token", ("sq0atp-", "sq0csp-", "sq0idp-", "eaaa"),
     r"\bsq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,43}\b|\bEAAA[A-Za-z0-9_\-+=]{60}\b"),
    ("square_token", ("sandbox-sq0",), r"\bsandbox-sq0(?:atb|csb|idb)-[A-Za-z0-9_\-]{20,}"),
    ("gocardless_token", ("live_", "sandbox_"),
     r"\b(?:live|sandbox)_(?=[A-Za-z0-9_\-=]*\d)[A-Za-z0-9_\-=]{40}(?![A-Za-z0-9_\-=])"),
    ("shopify_token", ("shpat_", "shpca_", "shppa_", "shpss_"), r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("paypal_token", ("access_token$production$",), r"access_token\$production\$[a-z0-9]{16}\$[a-f0-9]{32}"),
    ("flutterwave_key", ("flwseck", "flwpubk"), r"\bFLW(?:SECK|PUBK)(?:_TEST)?-[a-hA-H0-9]{32}-X\b"),
    ("coinbase_key", ("organizations/",), r"organizations/[a-f0-9\-]{36}/apiKeys/[a-f0-9\-]{36}"),
    # messaging and mail
    ("slack_token", ("xox",), r"\bxox[a-z](?:\.xox[a-z])?-[A-Za-z0-9\-]{10,}"),
    ("slack_token", ("xapp-",), r"\bxapp-\d-[A-Za-z0-9\-]{6,}"),
    ("slack_webhook", ("hooks.slack.com",),
     r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{8,}"),
    ("discord_webhook", ("discord",),
     r"https?://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{20,}"),
    ("discord_token", (".",), r"\b[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}\b"),
    ("telegram_token", (":",), r"\b\d{8,10}:[A-Za-z0-9_\-]{34,35}\b"),
    ("teams_webhook", ("webhook.office.com",), r"https?://[\w.\-]+\.webhook\.office\.com/webhookb2/[^\s\"'<>]+"),
    ("twilio_key", ("sk", "ac"), r"\b(?:SK|AC)[0-9a-f]{32}\b|\bSK[0-9a-z]{32}\b"),
    ("sendgrid_key", ("sg.",), r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}\b|\bSG\.[A-Za-z0-9=_\-.]{60,}"),
    ("sendinblue_key", ("xkeysib-", "xsmtpsib-"), r"\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b"),
    ("mailgun_key", ("key-",), r"\bkey-[a-f0-9]{32}\b"),
    ("mailchimp_key", ("-us",), r"\b[a-f0-9]{32}-us\d{1,2}\b"),
    ("mailersend_token", ("mlsn.",), r"\bmlsn\.[a-f0-9]{64}\b"),
    # productivity and other SaaS
    ("linear_key", ("lin_api_",), r"\blin_api_[A-Za-z0-9]{40}\b"),
    ("notion_token", ("secret_", "ntn_"), r"\bsecret_[A-Za-z0-9]{43}\b|\bntn_\d{11}[A-Za-z0-9]{35}\b"),
    ("airtable_token", ("pat",), r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    ("asana_token", (":",), r"\b\d/\d{16}:[a-f0-9]{32}\b"),
    ("clickup_token", ("pk_",), r"\bpk_\d{6,10}_[A-Z0-9]{32}\b"),
    ("figma_token", ("figd_",), r"\bfigd_[A-Za-z0-9_\-]{40}\b"),
    ("adafruit_key", ("aio_",), r"\baio_[A-Za-z0-9]{28}\b"),
    ("contentful_token", ("cfpat-",), r"\bCFPAT-[A-Za-z0-9_\-]{43}\b"),
    ("typeform_token", ("tfp_",), r"\btfp_[A-Za-z0-9_\-.=]{59}\b"),
    ("mapbox_token", ("sk.eyj",), r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    ("shippo_token", ("shippo_",), r"\bshippo_(?:live|test)_[a-f0-9]{40}\b"),
    ("frameio_token", ("fio-u-",), r"\bfio-u-[A-Za-z0-9_\-=]{64}\b"),
    ("dropbox_token", ("sl.",), r"\bsl\.[A-Za-z0-9_\-=]{130,}"),
    ("facebook_token", ("eaa",), r"\bEAA[A-Za-z0-9]{90,}"),
    ("facebook_token", ("%",), r"\b\d{15,16}%(?:7C)?[0-9A-Za-z_\-]{27,40}"),  # app id | app secret
    ("salesforce_token", ("!",), r"\b00[A-Za-z0-9]{13}![A-Za-z0-9._]{80,}"),
    ("plaid_token", ("access-sandbox-", "access-development-", "access-production-"),
     r"\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    ("settlemint_token", ("sm_pat_", "sm_aat_", "sm_sat_"), r"\bsm_(?:pat|aat|sat)_[A-Za-z0-9]{16,}"),
    ("twitter_token", ("aaaaaaaaaaaaaaaaaaaaa",), r"\bAAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,}"),
    ("onepassword_token", ("ops_eyj",), r"\bops_eyJ[A-Za-z0-9+/=_\-]{100,}"),
    ("onepassword_secret_key", ("a3-",), r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b"),
    ("age_secret_key", ("age-secret-key-1",), r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"),
    ("lob_key", ("live_", "test_"), r"\b(?:live|test)_(?:pub_)?[a-f0-9]{31,35}\b"),
    ("yandex_token", ("aqvn", "y0_", "t1."), r"\bAQVN[A-Za-z0-9_\-]{35,38}\b|\by0_[A-Za-z0-9_\-]{55}\b|\bt1\.[A-Z0-9a-z_\-]+[=]{0,2}\.[A-Z0-9a-z_\-]{86}[=]{0,2}"),
    ("jwt", ("eyj",),
     r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}+\.eyJ[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]{8,}+"),
    ("jwt", ("eyj",), r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}+\.eyJ[A-Za-z0-9_\-]{8,}+\.(?![A-Za-z0-9_\-])"),
)  # fmt: skip
