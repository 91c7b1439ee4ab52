; Attention Lab: Windows installer (Inno Setup 6).
;
; *** UNTESTED: written on Linux, never compiled or run on Windows by this project. ***
; The PyInstaller spec is shared with Linux, where the bundle is verified; check the items
; marked "verify" below the first time this is built.
;
; Exact commands, in a "Developer PowerShell" or cmd.exe at the repository root, on
; Windows 10/11 x64 with Python 3.11 (python.org installer) and Inno Setup 6
; (https://jrsoftware.org/isdl.php, or `winget install JRSoftware.InnoSetup`):
;
;   py -3.11 packaging\dev.py setup
;   .venv\Scripts\python -m pip install -c packaging\constraints.txt -r packaging\build-requirements.txt
;   .venv\Scripts\python -m PyInstaller packaging\attention_lab.spec --noconfirm --clean --distpath dist --workpath build\pyinstaller
;   "%ProgramFiles(x86)%\Inno Setup 6\ISCC.exe" packaging\windows\attention-lab.iss
;
; (To bundle GPT-2 too: `set ATTENTION_LAB_BUNDLE_GPT2=C:\path\to\gpt2` before PyInstaller;
; another demo model: `set ATTENTION_LAB_DEMO_MODEL=C:\path\to\folder`.)
;
; Result: dist\attention-lab-<version>-windows-x64-setup.exe.  Then check, in a new cmd.exe
; window, from another folder, with the network unplugged:
;
;   "%LOCALAPPDATA%\Programs\Attention Lab\attention-lab-cli.exe" --smoke-test   (exit code 0)
;   "%LOCALAPPDATA%\Programs\Attention Lab\attention-lab-cli.exe" lab --json
;
; verify: the windowed attention-lab.exe has no console, so `lab --json` output is only
; visible through attention-lab-cli.exe (the spec builds both on Windows).

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
