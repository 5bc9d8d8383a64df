"""Analysis: what differs between two snapshots (`diff`), why it moved performance (`explain`, its rule
catalog and relevance table), the gate (`gate`, `policy`), fleets compared with their majority
(`peers`), causes confirmed by experiment (`confirm`), run records compared (`run_causes`) and the
references users type (`references`: files, ids, `@latest`, `baseline:NAME`, `run:ID`, pasted reports).
It reads snapshots from every layer below and is read by the API and the CLI only.
"""
