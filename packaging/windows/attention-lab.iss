; Attention Lab: Windows installer (Inno Setup 6.3 or newer).
;
; Built and checked by the release workflow (.github/workflows/installers.yml) on a hosted
; Windows runner; not yet run there: until a run has passed, this script is unproven on
; Windows.  The PyInstaller spec is shared with Linux, where the bundle is verified.
;
; Exact commands, in cmd.exe or PowerShell at the repository root, on Windows 10/11 x64 with
; Python 3.11 (python.org installer) and Inno Setup 6.3+ (https://jrsoftware.org/isdl.php,
; `winget install JRSoftware.InnoSetup` or `choco install innosetup`):
;
;   py -3.11 packaging\build_windows.py    (.venv, PyInstaller, then ISCC on this file)
;   py -3.11 packaging\verify_app.py       (silent per-user install into a scratch folder,
;                                          the checks offline, uninstall)
;
; build_windows.py runs `ISCC.exe /DAppVersion=<the app's version> /Q packaging\windows\attention-lab.iss`.
; (To bundle GPT-2 too: `set ATTENTION_LAB_BUNDLE_GPT2=C:\path\to\gpt2` before building;
; another demo model: `set ATTENTION_LAB_DEMO_MODEL=C:\path\to\folder`.)
;
; Result: dist\attention-lab-<version>-windows-x64-setup.exe.  By hand, in a new cmd.exe
; window, from another folder, with the network unplugged:
;
;   "%LOCALAPPDATA%\Programs\Attention Lab\attention-lab-cli.exe" --smoke-test --all-panels
;   "%LOCALAPPDATA%\Programs\Attention Lab\attention-lab-cli.exe" lab --json
;
; The windowed attention-lab.exe has no console, so `lab --json` output is only visible
; through attention-lab-cli.exe (the spec builds both on Windows).

#if VER < EncodeVer(6, 3, 0)
  #error Inno Setup 6.3 or newer is needed (ArchitecturesAllowed=x64compatible)
#endif

#define AppName "Attention Lab"
#define AppExe "attention-lab.exe"
; keep in step with desktop/attention_lab/__init__.py (__version__)
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define Bundle "..\..\dist\attention-lab"

[Setup]
AppId={{3C9E3B4E-8F1A-4C55-9A7E-6B1D2F0A7C41}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Attention Lab
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
; per-user install by default: no administrator rights on a workshop laptop
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=attention-lab-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\resources\icons\attention-lab.ico
UninstallDisplayIcon={app}\{#AppExe}
Compression=lzma2/max
SolidCompression=yes
LZMANumBlockThreads=4
WizardStyle=modern
DisableProgramGroupPage=yes
LicenseFile=..\..\LICENSE

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"
Name: "brazilianportuguese"; MessagesFile: "compiler:Languages\BrazilianPortuguese.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"

[Files]
; the whole PyInstaller folder: attention-lab.exe, attention-lab-cli.exe, _internal\
Source: "{#Bundle}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent
