#!/usr/bin/env python3
"""Trusts every hook of CODEX_HOME/hooks.json the way Codex 0.169.0 records a
hook the user reviewed in /hooks: appends to CODEX_HOME/config.toml

    [hooks.state."<abs hooks.json>:<event>:<group>:<handler>"]
    trusted_hash = "sha256:<hex>"

where hex is the SHA-256 of the canonical JSON (sorted keys, compact) of the
normalized hook identity (codex-rs/hooks/src/engine/discovery.rs,
command_hook_hash). Checked against `codex app-server` hooks/list currentHash.
Usage: codex_trust.py CODEX_HOME"""
import hashlib
import json
import sys

home=sys.argv[1]
hooks=json.load(open(home+'/hooks.json'))['hooks']
label={'PreToolUse':'pre_tool_use','PostToolUse':'post_tool_use','PermissionRequest':'permission_request','SessionStart':'session_start','UserPromptSubmit':'user_prompt_submit','Stop':'stop'}
out=[]
for ev,groups in hooks.items():
    for gi,g in enumerate(groups):
        for hi,h in enumerate(g['hooks']):
            n={'type':'command','command':h['command'],'timeout':max(1,h.get('timeout',600)),'async':h.get('async',False)}
            if h.get('statusMessage') is not None: n['statusMessage']=h['statusMessage']
            ident={'event_name':label[ev],'hooks':[n]}
            if g.get('matcher') is not None: ident['matcher']=g['matcher']
            s=json.dumps(ident,sort_keys=True,separators=(',',':'),ensure_ascii=False)
            key='%s/hooks.json:%s:%d:%d'%(home,label[ev],gi,hi)
            out.append('[hooks.state.%s]\ntrusted_hash = "sha256:%s"\n'%(json.dumps(key),hashlib.sha256(s.encode()).hexdigest()))
open(home+'/config.toml','a').write('\n'+'\n'.join(out))
