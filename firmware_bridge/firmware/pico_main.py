# Copied to the Pico as /main.py (see README.md): runs the firmware at boot,
# unless GP0 is jumpered to GND (safe mode: the REPL stays usable for mpremote).
from machine import Pin

if Pin(0, Pin.IN, Pin.PULL_UP).value():
    from firmware.main import main

    main()
