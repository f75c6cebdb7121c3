"""Compare two runs of one program (issue #27): align them, measure each aligned pair, find the first divergence.

align.py pairs the records, metrics.py measures a pair and holds the tolerances, differences.py finds the differing
pairs, comparison.py runs it all (and refuses what cannot be compared), finding.py picks the first divergence and
lists ops only one run holds, document.py shapes the answer, html_page.py writes it as one self-contained page.
Runs are read only through the index's RunQueries protocol.
"""
