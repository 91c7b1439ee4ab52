# Inno Setup 6 (its compiler ISCC.exe) for packaging/build_windows.py, from Chocolatey:
# installed, or upgraded where an older one is there (attention-lab.iss needs 6.3+).
# The release workflow's Windows job runs this; by hand, `winget install JRSoftware.InnoSetup` does the same.
$ErrorActionPreference = "Stop"
choco upgrade innosetup --no-progress -y
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
$iscc = Join-Path ${env:ProgramFiles(x86)} "Inno Setup 6\ISCC.exe"
if (-not (Test-Path $iscc)) { Write-Error "no $iscc after the install" }
Write-Output "ISCC.exe $((Get-Item $iscc).VersionInfo.ProductVersion) at $iscc"
exit 0
