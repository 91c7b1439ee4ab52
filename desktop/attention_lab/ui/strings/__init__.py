"""Every text the app shows, one module per view (panels, tour, window, session, errors), each
registering its English and Brazilian Portuguese table with :func:`attention_lab.ui.i18n.register`
when its view is imported.  Kept apart from the views' logic so a translator reads them in one
place; :func:`attention_lab.ui.i18n.all_keys` lists them all for the completeness tests."""
