// Stand-in for `pip install …`: the download step's tool is already in the image.
console.log(`pip stand-in: nothing to install for ${JSON.stringify(process.argv.slice(2))}`);
