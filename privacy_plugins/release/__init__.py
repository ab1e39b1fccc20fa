"""The release flow: load → diagnose → anonymize → check → publish, driven by one ReleaseSpec."""
