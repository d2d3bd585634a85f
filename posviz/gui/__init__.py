"""The desktop window: Qt widgets that show a Session and send edits to it.

Nothing here computes: widgets observe ``posviz.document.session.Session`` and change it only
through its methods; the model runs on one background worker (see ``controller``).
"""
